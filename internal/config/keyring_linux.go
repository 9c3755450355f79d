package config

import (
	"errors"

	ss "github.com/zalando/go-keyring/secret_service"
)

// Users names every user stored under service in the Secret Service login
// collection, with one search and one property read per stored entry,
// where go-keyring's Get costs three D-Bus calls per name even when the
// name is absent (and gnome-keyring answers them one at a time). It looks
// where go-keyring's Get looks: the login collection, by the "service" and
// "username" attributes.
func (systemKeyring) Users(service string) ([]string, error) {
	svc, err := ss.NewSecretService()
	if err != nil {
		return nil, err
	}
	coll := svc.GetLoginCollection()
	if err := svc.Unlock(coll.Path()); err != nil {
		return nil, err
	}
	items, err := svc.SearchItems(coll, map[string]string{"service": service})
	if err != nil {
		return nil, err
	}
	var users []string
	for _, item := range items {
		v, err := svc.Object("org.freedesktop.secrets", item).GetProperty("org.freedesktop.Secret.Item.Attributes")
		if err != nil {
			return nil, err
		}
		attrs, ok := v.Value().(map[string]string)
		if !ok {
			return nil, errors.New("secret service: item attributes of an unexpected type")
		}
		if u, ok := attrs["username"]; ok {
			users = append(users, u)
		}
	}
	return users, nil
}
